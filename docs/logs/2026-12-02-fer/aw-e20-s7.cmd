cnnstudio-train --recipe fer-cnn --optimizer adamw --weight-decay 0.05 --threads 16 --epochs 20 --lr 0.002 --seed 7 --dataset fer2013:fer2013.csv --run-dir runs/aw-e20-s7

cnnstudio-train --recipe fer-cnn --epochs 20 --optimizer adamw --lr 0.002 --weight-decay 0.05 --threads 16 --dataset fer2013:fer2013.csv --run-dir runs/r-e20-adamw

cnnstudio-train --recipe fer-cnn --optimizer adamw --weight-decay 0.05 --threads 16 --epochs 16 --lr 0.002 --augment flip --seed 7 --dataset fer2013:fer2013.csv --run-dir runs/aw-e16-flip-s7

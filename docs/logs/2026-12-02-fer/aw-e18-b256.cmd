cnnstudio-train --recipe fer-cnn --optimizer adamw --weight-decay 0.05 --threads 16 --epochs 18 --lr 0.003 --batch 256 --dataset fer2013:fer2013.csv --run-dir runs/aw-e18-b256

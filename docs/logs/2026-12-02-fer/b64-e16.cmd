cnnstudio-train --recipe fer-cnn --epochs 16 --batch 64 --lr 0.025 --threads 16 --dataset fer2013:fer2013.csv --run-dir runs/b64-e16

cnnstudio-train --recipe fer-cnn --epochs 24 --threads 16 --dataset fer2013:fer2013.csv --run-dir runs/r-e24

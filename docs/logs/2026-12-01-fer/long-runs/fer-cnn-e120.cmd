cnnstudio-train --recipe fer-cnn --epochs 120 --threads 2 --dataset fer2013:fer2013.csv --run-dir runs/fer-cnn-e120

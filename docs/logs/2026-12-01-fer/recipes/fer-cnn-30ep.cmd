cnnstudio-train --recipe fer-cnn --epochs 30 --threads 16 --dataset fer2013:fer2013.csv --run-dir runs/fer-cnn-30ep

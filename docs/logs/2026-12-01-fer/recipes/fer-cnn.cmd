cnnstudio-train --recipe fer-cnn --threads 16 --dataset fer2013:fer2013.csv --run-dir runs/fer-cnn

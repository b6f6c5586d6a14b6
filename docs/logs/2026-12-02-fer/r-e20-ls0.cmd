cnnstudio-train --recipe fer-cnn --epochs 20 --label-smoothing 0 --threads 16 --dataset fer2013:fer2013.csv --run-dir runs/r-e20-ls0

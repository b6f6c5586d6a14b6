cnnstudio-train --recipe fer-cnn --epochs 120 --augment crop=4,flip,cutmix=1 --threads 2 --dataset fer2013:fer2013.csv --run-dir runs/fer-cnn-cutmix-e120

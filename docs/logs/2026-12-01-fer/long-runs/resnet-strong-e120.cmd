cnnstudio-train --recipe resnet-fer --epochs 120 --threads 2 --dataset fer2013:fer2013.csv --run-dir runs/resnet-strong-e120

cnnstudio-train --recipe resnet-fer --epochs 120 --augment crop=4,flip --threads 2 --dataset fer2013:fer2013.csv --run-dir runs/resnet-basic-e120

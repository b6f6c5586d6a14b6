cnnstudio-train --recipe resnet-fer --threads 2 --dataset fer2013:fer2013.csv --run-dir runs/resnet-fer

cnnstudio-train --recipe resnet-fer --epochs 200 --threads 2 --dataset fer2013:fer2013.csv --run-dir runs/resnet-e200
(resumed) cnnstudio-train --resume runs/resnet-e200 --threads 2

cnnstudio-train --recipe resnet-fer --epochs 120 --augment crop=4,flip,rotate=10,scale=0.9-1.1,erase=0.25,cutmix=1 --threads 2 --dataset fer2013:fer2013.csv --run-dir runs/resnet-cutmix-e120

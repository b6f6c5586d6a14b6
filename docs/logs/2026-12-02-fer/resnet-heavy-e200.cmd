cnnstudio-train --recipe resnet-fer --epochs 200 --augment crop=6,flip,rotate=15,scale=0.8-1.2,erase=0.5 --threads 2 --dataset fer2013:fer2013.csv --run-dir runs/resnet-heavy-e200
(resumed) cnnstudio-train --resume runs/resnet-heavy-e200 --threads 2

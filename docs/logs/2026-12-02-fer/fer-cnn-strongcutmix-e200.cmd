cnnstudio-train --recipe fer-cnn --epochs 200 --augment crop=4,flip,rotate=10,scale=0.9-1.1,erase=0.25,cutmix=1 --threads 2 --dataset fer2013:fer2013.csv --run-dir runs/fer-cnn-strongcutmix-e200
(resumed) cnnstudio-train --resume runs/fer-cnn-strongcutmix-e200 --threads 2

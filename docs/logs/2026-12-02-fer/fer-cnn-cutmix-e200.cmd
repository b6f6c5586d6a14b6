cnnstudio-train --recipe fer-cnn --epochs 200 --augment crop=4,flip,cutmix=1 --threads 2 --dataset fer2013:fer2013.csv --run-dir runs/fer-cnn-cutmix-e200
(resumed) cnnstudio-train --resume runs/fer-cnn-cutmix-e200 --threads 2

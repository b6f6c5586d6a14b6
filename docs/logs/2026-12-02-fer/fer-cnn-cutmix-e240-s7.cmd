cnnstudio-train --recipe fer-cnn --epochs 240 --augment crop=4,flip,cutmix=1 --seed 7 --threads 2 --dataset fer2013:fer2013.csv --run-dir runs/fer-cnn-cutmix-e240-s7
(resumed) cnnstudio-train --resume runs/fer-cnn-cutmix-e240-s7 --threads 2

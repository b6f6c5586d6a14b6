cnnstudio-train --recipe mini-xception --augment crop=4,flip,rotate=10,scale=0.9-1.1,erase=0.25 --threads 2 --dataset fer2013:fer2013.csv --run-dir runs/mini-xception-strong

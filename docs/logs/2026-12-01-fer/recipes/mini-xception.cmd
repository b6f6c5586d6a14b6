cnnstudio-train --recipe mini-xception --threads 2 --dataset fer2013:fer2013.csv --run-dir runs/mini-xception

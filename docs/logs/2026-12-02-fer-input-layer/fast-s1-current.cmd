cnnstudio-train --recipe fer-cnn-fast --seed 1 --threads 16 --dataset fer2013:fer2013.csv --run-dir runs/fast-s1-current   # build: current

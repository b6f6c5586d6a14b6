cnnstudio-train --recipe vgg-wide --threads 2 --dataset fer2013:fer2013.csv --run-dir runs/vgg-wide

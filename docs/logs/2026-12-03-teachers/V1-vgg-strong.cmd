cnnstudio-train --recipe resnet4-fer --epochs 100 --preset vgg-fer --dataset fer2013:fer2013.csv --run-dir runs/V1-vgg-strong

cnnstudio-train --recipe resnet4-fer --epochs 100 --preset vgg-fer --augment crop=4,flip,cutmix=1 --dataset fer2013:fer2013.csv --run-dir runs/V2-vgg-cutmix

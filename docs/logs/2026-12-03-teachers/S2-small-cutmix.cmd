cnnstudio-train --recipe resnet4-fer --epochs 100 --spec docs/logs/2026-12-03-teachers/vgg-fer-small.json --augment crop=4,flip,cutmix=1 --dataset fer2013:fer2013.csv --run-dir runs/S2-small-cutmix

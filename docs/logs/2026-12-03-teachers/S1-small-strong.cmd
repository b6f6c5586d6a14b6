cnnstudio-train --recipe resnet4-fer --epochs 100 --spec docs/logs/2026-12-03-teachers/vgg-fer-small.json --dataset fer2013:fer2013.csv --run-dir runs/S1-small-strong

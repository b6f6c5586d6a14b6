cnnstudio-train --recipe resnet-fer --spec docs/logs/2026-12-02-fer/resnet4-fer.json --epochs 200 --threads 2 --dataset fer2013:fer2013.csv --run-dir runs/resnet4-e200
(resumed) cnnstudio-train --resume runs/resnet4-e200 --threads 2

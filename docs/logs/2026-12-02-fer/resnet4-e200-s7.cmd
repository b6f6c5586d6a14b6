cnnstudio-train --recipe resnet-fer --spec docs/logs/2026-12-02-fer/resnet4-fer.json --epochs 200 --seed 7 --threads 4 --dataset fer2013:fer2013.csv --run-dir runs/resnet4-e200-s7

cnnstudio-train --recipe fer-cnn --seed 7 --dataset fer2013:fer2013.csv --run-dir runs/cudnn-bf16-s7

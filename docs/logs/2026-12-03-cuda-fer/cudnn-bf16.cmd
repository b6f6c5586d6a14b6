cnnstudio-train --recipe fer-cnn  --dataset fer2013:fer2013.csv --run-dir runs/cudnn-bf16

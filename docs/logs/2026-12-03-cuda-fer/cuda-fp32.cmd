cnnstudio-train --recipe fer-cnn --backend cuda --precision fp32 --dataset fer2013:fer2013.csv --run-dir runs/cuda-fp32

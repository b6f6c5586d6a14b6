cnnstudio-train --recipe fer-cnn --backend cuda --precision bf16 --seed 7 --dataset fer2013:fer2013.csv --run-dir runs/cuda-bf16-s7

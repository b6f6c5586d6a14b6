cnnstudio-train --recipe fer-cnn --epochs 24 --batch 256 --lr 0.03 --threads 16 --dataset fer2013:fer2013.csv --run-dir runs/b256-e24-lr03

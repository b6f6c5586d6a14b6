cnnstudio-train --recipe fer-cnn --epochs 20 --batch 256 --lr 0.1 --threads 16 --dataset fer2013:fer2013.csv --run-dir runs/fer-cnn-b256-e20

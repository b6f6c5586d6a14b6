cnnstudio-train --recipe fer-cnn --epochs 20 --batch 512 --lr 0.2 --threads 16 --dataset fer2013:fer2013.csv --run-dir runs/fer-cnn-b512-e20

cnnstudio-train --recipe resnet4-fer-distilled --threads 4 --teacher .device/teachers/fer-resnet4-e200 --teacher .device/teachers/fer-resnet-e120 --teacher resources/models/fer-resnet --seed 7 --dataset fer2013:fer2013.csv --run-dir runs/r2-abd-w9-t3-s7
(resumed) cnnstudio-train --resume runs/r2-abd-w9-t3-s7 --threads 4
(resumed) cnnstudio-train --resume runs/r2-abd-w9-t3-s7 --threads 4

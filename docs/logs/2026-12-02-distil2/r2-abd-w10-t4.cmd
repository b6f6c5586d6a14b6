cnnstudio-train --recipe resnet4-fer-distilled --threads 4 --teacher .device/teachers/fer-resnet4-e200 --teacher .device/teachers/fer-resnet-e120 --teacher resources/models/fer-resnet --distill-weight 1 --distill-temperature 4 --dataset fer2013:fer2013.csv --run-dir runs/r2-abd-w10-t4
(resumed) cnnstudio-train --resume runs/r2-abd-w10-t4 --threads 4
(resumed) cnnstudio-train --resume runs/r2-abd-w10-t4 --threads 4

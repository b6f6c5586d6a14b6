cnnstudio-train --recipe resnet4-fer --threads 4 --teacher resources/models/fer-resnet --teacher .device/teachers/r3-120 --teacher .device/teachers/r3-80 --distill-weight 0.9 --distill-temperature 3 --dataset fer2013:fer2013.csv --run-dir runs/d-abc-w9-t3
(resumed) cnnstudio-train --resume runs/d-abc-w9-t3 --threads 4
(resumed) cnnstudio-train --resume runs/d-abc-w9-t3 --threads 4

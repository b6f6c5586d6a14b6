cnnstudio-train --recipe mini-xception --threads 4 --teacher resources/models/fer-resnet --teacher .device/teachers/r3-120 --teacher .device/teachers/r3-80 --distill-weight 0.7 --distill-temperature 2 --dataset fer2013:fer2013.csv --run-dir runs/d-mx-abc-w7-t2
(resumed) cnnstudio-train --resume runs/d-mx-abc-w7-t2 --threads 4

# Session tool (not part of the project): FER2013 CSV <-> MED-predicted residuals, so the data
# fits the GPU machine's 64 MiB carry. encode: codec.py encode CSV.gz OUT_PREFIX PARTS
# decode: codec.py decode OUT.csv PART... (writes Kaggle's CSV: emotion,pixels,Usage)
import gzip, lzma, sys, numpy as np
USAGES = ["Training", "PublicTest", "PrivateTest"]
def med(img):  # img: (N,48,48) int16 -> prediction of each pixel from left a, up b, upleft c
    a = np.zeros_like(img); b = np.zeros_like(img); c = np.zeros_like(img)
    a[:, :, 1:] = img[:, :, :-1]; b[:, 1:, :] = img[:, :-1, :]; c[:, 1:, 1:] = img[:, :-1, :-1]
    mx = np.maximum(a, b); mn = np.minimum(a, b)
    return np.where(c >= mx, mn, np.where(c <= mn, mx, a + b - c))
if sys.argv[1] == "encode":
    labels, usages, pixels = [], [], []
    with gzip.open(sys.argv[2], "rt") as f:
        next(f)
        for line in f:
            e, p, u = line.strip().split(",")
            labels.append(int(e)); usages.append(USAGES.index(u)); pixels.append(np.array(p.split(), np.uint8))
    img = np.stack(pixels).reshape(-1, 48, 48).astype(np.int16)
    res = ((img - med(img)) % 256).astype(np.uint8)
    head = np.stack([np.array(labels, np.uint8), np.array(usages, np.uint8)], 1)
    blob = np.concatenate([head, res.reshape(len(labels), -1)], 1)
    for k, part in enumerate(np.array_split(blob, int(sys.argv[4]))):
        with open(f"{sys.argv[3]}.{k}.raw", "wb") as out:  # compressed by xz outside
            out.write(np.int32(len(part)).tobytes() + part.tobytes())
else:
    parts = []
    for name in sys.argv[3:]:  # each file holds one or more parts: int32 count, count rows
        raw = lzma.open(name).read() if name.endswith('.xz') else open(name, 'rb').read()
        while raw:
            n = int(np.frombuffer(raw[:4], np.int32)[0])
            parts.append(np.frombuffer(raw[4:4 + n * 2306], np.uint8).reshape(n, 2306))
            raw = raw[4 + n * 2306:]
    blob = np.concatenate(parts)
    res = blob[:, 2:].reshape(-1, 48, 48).astype(np.int16)
    img = np.zeros_like(res)
    for y in range(48):  # MED needs the decoded left/up neighbours: one pixel column at a time
        for x in range(48):
            a = img[:, y, x - 1] if x else np.zeros(len(img), np.int16)
            b = img[:, y - 1, x] if y else np.zeros(len(img), np.int16)
            c = img[:, y - 1, x - 1] if x and y else np.zeros(len(img), np.int16)
            mx = np.maximum(a, b); mn = np.minimum(a, b)
            p = np.where(c >= mx, mn, np.where(c <= mn, mx, a + b - c))
            img[:, y, x] = (res[:, y, x] + p) % 256
    with open(sys.argv[2], "w") as out:
        out.write("emotion,pixels,Usage\n")
        for row, pix in zip(blob, img.reshape(len(img), -1)):
            out.write(f"{row[0]},{' '.join(map(str, pix.tolist()))},{USAGES[row[1]]}\n")

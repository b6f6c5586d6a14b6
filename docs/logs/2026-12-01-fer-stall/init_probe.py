# The stall of issue #12 in PyTorch: fer-cnn (bench/pytorch_reference.py's module) trained with the
# issue's SGD settings at full learning rate from step 1 (lr 0.05, momentum 0.9, weight decay 5e-4,
# label smoothing 0.1, batch 64) on the first N Training rows of FER2013, from three initialisations:
#   default  PyTorch's own (kaiming_uniform(a=sqrt(5)), uniform biases)
#   ours     CNN Studio's before the fix: He normal for weights feeding a ReLU, Glorot uniform for
#            the class-score layer, zero biases
#   fixed    ours with the class-score layer at N(0, 0.01^2), as network.cpp now does
# Prints the loss of each step and, before and after, the logits' standard deviation and the share
# of fc1's 256 units that no image of the first 256 activates.
#   FER2013_CSV=fer2013.csv.gz /usr/bin/python3 init_probe.py {default|ours|fixed} 1280 12
import gzip, math, os, sys
import torch, torch.nn as nn, torch.nn.functional as F
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../bench'))
from pytorch_reference import SpecNetwork, load_spec
torch.set_num_threads(2)
N, B, STEPS = int(sys.argv[2]), 64, int(sys.argv[3])
rows = []
with gzip.open(os.environ['FER2013_CSV'], 'rt') as f:
    next(f)
    for line in f:
        e, p, u = line.strip().split(',')
        if u == 'Training': rows.append((int(e), [float(v) for v in p.split()]))
        if len(rows) == N: break
x = torch.tensor([r[1] for r in rows]).view(-1, 1, 48, 48) / 255.0
y = torch.tensor([r[0] for r in rows])
x = (x - x.mean()) / x.std()
def ours(model):  # network.cpp: He normal for weights feeding a ReLU (through BN/dropout), Glorot uniform otherwise, zero biases
    for name, m in model.layers.items():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            fan_in = m.weight[0].numel(); fan_out = m.weight.shape[0] * m.weight[0][0].numel()
            if name == 'logits':
                lim = math.sqrt(6 / (fan_in + fan_out)); nn.init.uniform_(m.weight, -lim, lim)
            else:
                nn.init.normal_(m.weight, 0, math.sqrt(2 / fan_in))
            if m.bias is not None: nn.init.zeros_(m.bias)
torch.manual_seed(0)
model = SpecNetwork(load_spec('fer-cnn'))
if sys.argv[1] in ('ours', 'fixed'): ours(model)
if sys.argv[1] == 'fixed': nn.init.normal_(model.layers['logits'].weight, 0, 0.01)
def probe(tag):
    with torch.no_grad():
        h = model.layers['fc1'](torch.flatten(run_to('pool3', x[:256]), 1)); out = model(x[:256])
    print(tag, 'fc1 units never active on 256 images: %.3f' % ((h > 0).sum(0) == 0).float().mean().item(),
          'logit std %.3f' % out.std().item(), flush=True)
def run_to(name, inp):
    values = {model.input_name: inp}
    for n, inputs in model.order:
        values[n] = model.layers[n](*[values[i] for i in inputs])
        if n == name: return values[n]
probe('init')
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
g = torch.Generator().manual_seed(1)
losses = []
for step in range(STEPS):
    idx = torch.randint(0, N, (B,), generator=g)
    out = model(x[idx])
    loss = F.cross_entropy(out, y[idx], label_smoothing=0.1)
    opt.zero_grad(); loss.backward(); opt.step()
    losses.append(round(loss.item(), 3))
print(sys.argv[1], 'losses', losses, flush=True)
probe('after')

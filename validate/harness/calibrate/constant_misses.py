# The constant-misses kernel (and const_addresses again) with 1, 4, 16 and 32 warps on the H200 of
# the device machine, 2026-11-21, through CuPy, as calibrate_kernels.py was run (see README.md).
# Output: {"const_addresses16": [...], "const_misses16": [7.261, 11.683, 33.063, 73.236, 156.109,
# 331.423], ...}: SM cycles per warp-level load for 1, 2, 4, 8, 16, 32 distinct addresses.
import cupy as cp,numpy as np,json
U=np.uint32
m=cp.RawModule(code=open('/tmp/cal/constant.cu').read());o=cp.zeros(4,cp.uint64);R={}
for k in['const_addresses','const_misses']:
 f=m.get_function(k)
 for wp in[1,4,16,32]:
  q=[]
  for d in[1,2,4,8,16,32]:
   r=[]
   for _ in range(3):f((1,),(32*wp,),(U(d),U(64),U(320 if k=='const_misses' else 0),o));r.append(int(o[0])/(wp*64*8))
   q.append(round(float(np.median(r)),3))
  R[k+str(wp)]=q
print(json.dumps(R))

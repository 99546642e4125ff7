# The calibration kernels of validate/calibrate/*.cu run through CuPy with the parameters of
# validate/src/calibrate/bench.rs, on the H200 of the device machine, 2026-11-21 (results.json).
# `validate calibrate` itself could not run there: the device tool sends the lead's checkout, not
# this worktree. The sources were sent with their comments stripped (same code) and unpacked into
# /tmp/cal; CuPy compiles them with NVRTC for the device (sm_90) instead of loading the committed
# compute_80 PTX. Kept as it ran (compact), as the record behind the test fixture
# `h200_measured` in validate/src/calibrate/tests.rs.
import cupy as cp,numpy as np,json,ctypes,time
D='/tmp/cal/';U=np.uint32;L=np.uint64
M={n:cp.RawModule(code=open(D+n+'.cu').read()) for n in['latency','constant','shared','bandwidth']}
F=lambda m,k:M[m].get_function(k)
S=cp.cuda.Device().attributes['MultiProcessorCount'];R={};l2=62914560
def T(f,w=0,r=1):
 for _ in range(w):f()
 cp.cuda.Device().synchronize();o=[]
 for _ in range(r):
  a=cp.cuda.Event();b=cp.cuda.Event();a.record();f();b.record();b.synchronize();o.append(cp.cuda.get_elapsed_time(a,b))
 return o
md=lambda v:float(np.median(v))
sp=F('bandwidth','spin');so=cp.zeros(S,cp.uint64)
def clk(w):
 if w:sp((S,),(32,),(L(100000000),so))
 m=[]
 for _ in range(3):
  t1=T(lambda:sp((S,),(32,),(L(1000000),so)))[0];t2=T(lambda:sp((S,),(32,),(L(21000000),so)))[0];m.append(20e6/((t2-t1)*1e3))
 return md(m)
R['clock_start_mhz']=clk(1)
ci=F('latency','chase_init')
def ch(b,n,s):
 st=max(1,round(n*0.618034))
 while np.gcd(st,n)!=1:st+=1
 if n<=2:st=1
 ci((min(4096,(n+255)//256),),(256,),(L(b),L(n),L(s),L(st)))
o=cp.zeros(4,cp.uint64)
def cs(k,p,w,h):
 F('latency',k)((1,),(1,),(L(p),U(w),U(h),o));return int(o[0])/h
b=cp.zeros(1024,cp.uint64);ch(b.data.ptr,64,16);R['l1']=cs('chase_plain',b.data.ptr,64,8192)
b=cp.zeros(1<<17,cp.uint64);ch(b.data.ptr,4096,32);R['l2']=cs('chase_cg',b.data.ptr,4096,8192)
W=32*l2//16;big=cp.zeros(W*16,cp.uint8);sk=cp.zeros(4,cp.uint32);rb=F('bandwidth','read_bytes')
rd=lambda:rb((S*8,),(256,),(big,L(W),sk))
db=cp.zeros(3*65536*32,cp.uint64);r=[]
for g in range(3):
 p=db.data.ptr+g*65536*32*8;ch(p,65536,32);rd();r.append(cs('chase_cg',p,0,16384))
R['dram']=r
F('latency','chase_shared')((1,),(256,),(U(1024),U(1),U(1024),U(8192),o));R['shared']=int(o[0])/8192
cc=F('constant','chase_const');g=M['constant'].get_global('cchain');sw=[]
for ws in[512,1024,1536,1792,2048,2304,2560,3072,4096,6144,8192,12288,16384,24576,32768,40960,49152,57344,65536]:
 n=ws//64;a=np.zeros(16384,np.uint32)
 for i in range(n):a[i*16]=((i+1)%n)*64
 g.copy_from_host(a.ctypes.data_as(ctypes.c_void_p),65536);r=[]
 for _ in range(3):cc((1,),(1,),(U(n),U(4096),U(0),o));r.append(int(o[0])/4096)
 sw.append((ws,round(md(r),3)))
R['constant_sweep']=sw
R['read']=(W*16,md(T(rd,2,10)));h=W//2;cb=F('bandwidth','copy_bytes');p=big.data.ptr
R['copy']=(h*32,md(T(lambda:cb(((h+255)//256,),(256,),(L(p),L(p+h*16),L(h))),2,10)))
w2=l2//4//16;l2b=cp.zeros(w2*16,cp.uint8);rl=F('bandwidth','read_l2')
R['l2_read']=(w2*16*128,md(T(lambda:rl((S*4,),(256,),(l2b,L(w2),U(128),sk)),2,10)))
sb=F('shared','smem_bandwidth');so4=cp.zeros(4*S,cp.uint64)
for _ in range(2):sb((S,),(1024,),(U(512),U(0),so4))
v=so4.get().reshape(-1,4);R['shared_bpc_med']=float(np.median(1024*512*64/v[:,0]));R['smem_sms']=len(set(v[:,1]))
ca=F('constant','const_addresses');R['constant_addresses']=[]
for d in[1,2,4,8,16,32]:
 r=[]
 for _ in range(3):ca((1,),(512,),(U(d),U(256),U(0),o));r.append(int(o[0])/(16*256*8))
 R['constant_addresses'].append((d,round(md(r),4)))
ss=F('shared','smem_stride');R['bank']=[]
for s in range(1,33):
 r=[]
 for _ in range(3):ss((1,),(512,),(U(s),U(256),U(0),o));r.append(int(o[0])/(16*256*8))
 R['bank'].append(round(md(r),4))
e=F('bandwidth','empty');R['launch_single_us']=md(T(lambda:e((1,),(32,),()),20,200))*1e3
s1=cp.zeros(1,cp.uint64)
def beh(c,f,n):
 q=[]
 for _ in range(n):
  sp((1,),(32,),(L(c),s1));a=cp.cuda.Event();b=cp.cuda.Event();a.record();f();b.record();b.synchronize();q.append(cp.cuda.get_elapsed_time(a,b))
 return q
R['launch_gpu_single_us']=(md(beh(100000,lambda:e((1,),(32,),()),100))-md(beh(100000,lambda:0,100)))*1e3
t0=time.time()
def many():
 for _ in range(1000):e((1,),(32,),())
 R['host_ms']=(time.time()-t0)*1e3
R['launch_gpu_b2b_us']=beh(40000000,many,1)[0]
R['clock_end_mhz']=clk(0)
print(json.dumps(R))

#include <cstdio>
#include <algorithm>
#include <vector>
__global__ void empty(){}
__global__ void spin(long long c){long long t0=clock64();while(clock64()-t0<c);}
int main(){cudaEvent_t a,b;cudaEventCreate(&a);cudaEventCreate(&b);float ms;std::vector<float>v;
for(int i=0;i<20;i++)empty<<<1,32>>>();cudaDeviceSynchronize();
for(int i=0;i<100;i++){spin<<<1,1>>>(100000);cudaEventRecord(a);empty<<<1,32>>>();cudaEventRecord(b);cudaEventSynchronize(b);cudaEventElapsedTime(&ms,a,b);v.push_back(ms);}
std::sort(v.begin(),v.end());printf("behind spin: single median %.3f us p10 %.3f p90 %.3f\n",v[50]*1e3,v[10]*1e3,v[90]*1e3);v.clear();
for(int i=0;i<100;i++){spin<<<1,1>>>(100000);cudaEventRecord(a);cudaEventRecord(b);cudaEventSynchronize(b);cudaEventElapsedTime(&ms,a,b);v.push_back(ms);}
std::sort(v.begin(),v.end());printf("behind spin: no kernel median %.3f us\n",v[50]*1e3);
spin<<<1,1>>>(20000000);cudaEventRecord(a);for(int i=0;i<1000;i++)empty<<<1,32>>>();cudaEventRecord(b);cudaEventSynchronize(b);cudaEventElapsedTime(&ms,a,b);printf("behind spin: b2b %.3f us\n",ms);
cudaStream_t s;cudaStreamCreate(&s);cudaGraph_t g;cudaGraphExec_t ge;cudaStreamBeginCapture(s,cudaStreamCaptureModeGlobal);for(int i=0;i<1000;i++)empty<<<1,32,0,s>>>();cudaStreamEndCapture(s,&g);cudaGraphInstantiate(&ge,g,0);cudaGraphLaunch(ge,s);cudaStreamSynchronize(s);
cudaEventRecord(a,s);cudaGraphLaunch(ge,s);cudaEventRecord(b,s);cudaEventSynchronize(b);cudaEventElapsedTime(&ms,a,b);printf("graph: %.3f us per kernel\n",ms);}

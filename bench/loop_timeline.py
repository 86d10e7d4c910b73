#!/usr/bin/env python3
"""Where a proxy's event-loop threads spend each relayed event.

Reads `perf script --ns -F comm,tid,cpu,time,event,trace` of a `perf record -a` with the events
raw_syscalls:sys_enter, raw_syscalls:sys_exit, sched:sched_switch and sched:sched_wakeup, keeps
the threads whose name matches THREAD-REGEX, and prints: user time (on a CPU, outside a system
call), time in each system call, time preempted and asleep, how long a woken thread waited to
run, all per relayed event (writes to the client: write, writev, sendto), and the user time
between each pair of consecutive system calls.

    perf record -q -o tg.data -e raw_syscalls:sys_enter,raw_syscalls:sys_exit,sched:sched_switch,sched:sched_wakeup -a -- sleep 1
    perf script --ns -i tg.data -F comm,tid,cpu,time,event,trace | python3 bench/loop_timeline.py tokengap 'tokengap-epoll'
    perf script --ns -i ng.data -F comm,tid,cpu,time,event,trace | python3 bench/loop_timeline.py nginx '^nginx$'

Tracing every system call of the machine slows every process down (the stages of bench/stages.sh
are the undisturbed figures); compare two proxies traced the same way, not absolute times.
TID=N keeps one thread only.
"""
import collections
import os
import re
import sys

NR={0:'read',1:'write',20:'writev',45:'recvfrom',44:'sendto',281:'epoll_pwait',441:'epoll_pwait2',232:'epoll_wait',19:'readv',46:'sendmsg',47:'recvmsg',3:'close',16:'ioctl',202:'futex',186:'gettid',55:'getsockopt',233:'epoll_ctl',288:'accept4',42:'connect',228:'clock_gettime',24:'sched_yield'}
want=sys.argv[2]  # regex on comm
line_re=re.compile(r'^\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)$')
st={}  # tid -> state
def S(tid):
    if tid not in st:
        st[tid]=dict(insys=None,t0=None,last=None,sys=collections.Counter(),syscnt=collections.Counter(),user=0.0,off_r=0.0,off_s=0.0,offstart=None,offstate=None,runq=[],wakeat=None, userseg=collections.Counter(), prevexit=None)
    return st[tid]
for line in sys.stdin:
    m=line_re.match(line)
    if not m: continue
    comm,tid,cpu,t,ev,rest=m.groups(); t=float(t); tid=int(tid)
    if ev=='sched:sched_wakeup':
        mm=re.search(r'comm=(.*?) pid=(\d+)',rest)
        if mm and re.search(want,mm.group(1)):
            s=S(int(mm.group(2)));
            if s['wakeat'] is None: s['wakeat']=t
        continue
    if ev=='sched:sched_switch':
        mm=re.search(r'prev_comm=(.*?) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)',rest)
        if not mm: continue
        pc,pp,pst,nc,np_=mm.groups()
        if re.search(want,pc):
            s=S(int(pp)); s['offstart']=t; s['offstate']=pst
            if s['last'] is not None and s['insys'] is None: s['user']+=t-s['last']
            s['last']=None
        if re.search(want,nc):
            s=S(int(np_))
            if s['offstart'] is not None:
                d=t-s['offstart']
                if s['offstate'].startswith('R'): s['off_r']+=d
                else:
                    s['off_s']+=d
                    if s['wakeat'] is not None: s['runq'].append(t-s['wakeat'])
            elif s['wakeat'] is not None: s['runq'].append(t-s['wakeat'])
            s['wakeat']=None; s['offstart']=None; s['last']=t
        continue
    if not re.search(want,comm): continue
    s=S(tid)
    if ev=='raw_syscalls:sys_enter':
        nr=int(re.match(r'NR (\d+)',rest).group(1))
        if s['last'] is not None and s['insys'] is None:
            seg=t-s['last']; s['user']+=seg
            s['userseg'][(s['prevexit'],NR.get(nr,nr))]+=seg
        s['insys']=NR.get(nr,nr); s['t0']=t; s['last']=t
    elif ev=='raw_syscalls:sys_exit':
        if s['insys'] is not None and s['t0'] is not None:
            s['sys'][s['insys']]+=t-s['t0']; s['syscnt'][s['insys']]+=1
            s['prevexit']=s['insys']
        s['insys']=None; s['last']=t
if os.environ.get('TID'): st={k:v for k,v in st.items() if k==int(os.environ['TID'])}
tot=collections.Counter(); cnt=collections.Counter(); user=0; offr=0; offs=0; rq=[]; seg=collections.Counter()
for tid,s in st.items():
    tot.update(s['sys']); cnt.update(s['syscnt']); user+=s['user']; offr+=s['off_r']; offs+=s['off_s']; rq+=s['runq']; seg.update(s['userseg'])
writes=cnt.get('writev',0)+cnt.get('write',0)+cnt.get('sendto',0)
print(sys.argv[1], 'threads',len(st),'writes',writes)
print(' user %.3f s  in syscalls %.3f s  preempted(R) %.3f s  asleep %.3f s' % (user,sum(tot.values()),offr,offs))
for k,v in tot.most_common(10): print('  %-14s n=%7d  total %.3f s  mean %.1f us' % (k,cnt[k],v,1e6*v/cnt[k]))
rq.sort()
if rq: print(' wakeup->run latency n=%d p50 %.1f p90 %.1f p99 %.1f us' % (len(rq),1e6*rq[len(rq)//2],1e6*rq[int(len(rq)*.9)],1e6*rq[int(len(rq)*.99)]))
if writes: print(' per write: user %.1f us, syscalls %.1f us' % (1e6*user/writes, 1e6*sum(tot.values())/writes))
print(' user time by (previous syscall -> next syscall):')
for k,v in seg.most_common(8): print('   %-36s %.3f s' % ('%s -> %s'%k, v))

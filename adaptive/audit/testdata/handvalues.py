#!/usr/bin/env python3
# Writes the hand-made events files of the audit tests (testdata/*/adaptive_scale_events.jsonl and
# adaptive_scale_summary.json) from the fixture run's per-request export, computed here without
# any of the Go code: numpy's linear percentile over the requests sent in [start, end), wherever
# they ended; straddling: sent before start, ended after it. Usage (repository root):
# analyze adaptive/audit/testdata/run --plan
# adaptive/audit/testdata/fixture.llmplan --output-dir /tmp/an --export-level records;
# python3 adaptive/audit/testdata/handvalues.py /tmp/an/profile_export.jsonl
import copy, json, math, os, sys
rows=[json.loads(l) for l in open(sys.argv[1])]
t0=min(r['metadata']['request_start_ns'] for r in rows)
def pct(xs,p):
    xs=sorted(xs); n=len(xs); vi=(n-1)*(p/100); lo=math.floor(vi); k=int(lo)
    if k>=n-1: return xs[-1]
    a,b=xs[k],xs[k+1]; t=vi-lo
    return b-(b-a)*(1-t) if t>=0.5 else a+(b-a)*t
start=json.load(open("adaptive/audit/testdata/run/run.json"))["start_unix_ns"]
wins=[(0.5,1.5,8,'ramp'),(1.5,2.5,4,'ramp'),(2.5,3.5,4,'sustain'),(3.5,3.7,4,'sustain')]
slas=[("ttft:p95",lambda ok,ins:pct([r['metrics']['time_to_first_token']['value'] for r in ok],95),'<=',53),
      ("error_rate:avg",lambda ok,ins:(len(ins)-len(ok))/len(ins),'<=',0.045),
      ("request_latency:p50",lambda ok,ins:pct([r['metrics']['request_latency']['value'] for r in ok],50),'<=',100)]
def ev(**k):
    d={"schema_version":1}; d.update(k); return d
def at(sec): return dict(timestamp_ns=int(sec*1e9)+(t0-start), timestamp_unix_ns=t0+int(sec*1e9))
events=[ev(event="adaptive_phase_started",phase="ramp",control_variable="concurrency",control_value=8,**at(0.5))]
for i,(a,b,cv,ph) in enumerate(wins):
    s=t0+int(a*1e9); e=t0+int(b*1e9)
    ins=[r for r in rows if s<=r['metadata']['request_start_ns']<e]
    strad=[r for r in rows if r['metadata']['request_start_ns']<s and r['metadata']['request_end_ns']>=s]
    ok=[r for r in ins if r.get('error') is None]
    vals={}; margins=[]; passed=True
    for name,f,op,thr in slas:
        v=f(ok,ins); vals[name]=v
        m=(thr-v)/abs(thr); margins.append((v<=thr and 1 or 0, m, name)); passed=passed and v<=thr
    fails=[x for x in margins if x[0]==0]
    binding=min(fails or margins,key=lambda x:x[1])[2]
    w=ev(event="adaptive_window",phase=ph,control_variable="concurrency",control_value=cv,window_index=i,window_start_ns=s,window_end_ns=e,
         completed_requests=len(ins),straddling_requests=len(strad),sla_values=vals,**at(b))
    if i<3: w.update(passed=passed,binding_sla=binding)
    events.append(w)
    if i==0: events.append(ev(event="adaptive_decision",phase="ramp",control_variable="concurrency",control_value_before=8,control_value_after=4,first_failing_value=8,**at(b+0.001)))
    if i==1:
        events.append(ev(event="boundary_discovered",control_variable="concurrency",boundary_value=4,last_passing_value=4,first_failing_value=8,**at(b+0.001)))
        events.append(ev(event="sustain_started",phase="sustain",control_variable="concurrency",control_value=4,**at(b+0.002)))
events.append(ev(event="adaptive_complete",control_variable="concurrency",boundary_value=4,reason="sustain_duration_completed",**at(3.8)))
summary={"schema_version":1,"status":"complete","completed_reason":"sustain_duration_completed","control_variable":"concurrency",
 "boundary_value":4,"last_passing_value":4,"first_failing_value":8,"final_value":4,"sustain_windows_passed":1,"sustain_windows_total":1,
 "candidates":[{"value":8,"windows":1,"windows_passed":0,"passed":False},{"value":4,"windows":2,"windows_passed":2,"passed":True}],
 "slas":["ttft:p95:le:53","error_rate:avg:le:0.045","request_latency:p50:le:100"]}
def write(name, evs, summ=summary):
    d='adaptive/audit/testdata/'+name; os.makedirs(d,exist_ok=True)
    with open(d+'/adaptive_scale_events.jsonl','w') as f:
        for e in evs: f.write(json.dumps(e)+"\n")
    if summ is not None: json.dump(summ,open(d+'/adaptive_scale_summary.json','w'),indent=2)
write('agree',events)
def win(evs,i): return [e for e in evs if e['event']=='adaptive_window' and e['window_index']==i][0]
w=copy.deepcopy(events); win(w,2)['sla_values']['ttft:p95']=45.0; write('wrong-value',w)
w=copy.deepcopy(events); win(w,0)['passed']=True; sm=copy.deepcopy(summary); sm['candidates'][0].update(windows_passed=1,passed=True); write('wrong-decision',w,sm)
sm=copy.deepcopy(summary); sm['candidates'][1]['windows_passed']=1; sm['sustain_windows_passed']=0; write('wrong-summary',events,sm)
w=copy.deepcopy(events); x=win(w,1); x['completed_requests']-=1; x['sla_values']['ttft:p95']=38.5; write('fewer-records',w)
w=copy.deepcopy(events); x=win(w,2); x['completed_requests']-=1; x['sla_values']['ttft:p95']=53.5; x['passed']=False; x['binding_sla']='ttft:p95'
sm=copy.deepcopy(summary); sm['candidates'][1].update(windows_passed=1,passed=False); sm['sustain_windows_passed']=0; write('borderline',w,sm)
write('no-summary',events,None)
for e in events:
    if e['event']=='adaptive_window': print(e['window_index'],e['completed_requests'],e['straddling_requests'],e['sla_values'],e.get('passed'),e.get('binding_sla'))

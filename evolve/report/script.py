"""The report page's script (inline, no network): the node panel, the tree's zoom, pan and fit, and the
sortable, filterable node table. One listener per widget (delegation), so a 10,000-node page is
interactive at once."""

SCRIPT = r"""
const NODES = JSON.parse(document.getElementById('node-data').textContent);
const EXCHANGES = JSON.parse(document.getElementById('exchange-data').textContent);
function el(tag, text, cls){const e=document.createElement(tag);if(text!==undefined)e.textContent=text;if(cls)e.className=cls;return e;}
function rate(c){const n=c[0]+c[1];return n?`${c[0]}/${n} (${(c[0]/n).toFixed(2)})`:'no results';}
const svg=document.getElementById('tree');
const FULL=svg.getAttribute('viewBox').split(' ').map(Number);
const LABEL_SCALE=0.6;
let view=FULL.slice();
function setView(v){view=v;svg.setAttribute('viewBox',v.map(n=>n.toFixed(2)).join(' '));
  const scale=Math.min(svg.clientWidth/v[2],svg.clientHeight/v[3]);svg.classList.toggle('labels',scale>=LABEL_SCALE);
  svg.dataset.scale=scale.toFixed(4);}
function fit(){setView(FULL.slice());}
function zoomAt(f,cx,cy){setView([cx-(cx-view[0])*f,cy-(cy-view[1])*f,view[2]*f,view[3]*f]);}
function userPoint(e){const m=svg.getScreenCTM().inverse();return new DOMPoint(e.clientX,e.clientY).matrixTransform(m);}
function centre(id){const c=document.querySelector(`.node[data-id="${CSS.escape(id)}"] circle:not(.ring)`);if(!c)return;
  const x=+c.getAttribute('cx'),y=+c.getAttribute('cy');const w=Math.min(FULL[2],svg.clientWidth/1.2),h=w*svg.clientHeight/svg.clientWidth;
  setView([x-w/2,y-h/2,w,h]);}
svg.addEventListener('wheel',e=>{e.preventDefault();const p=userPoint(e);zoomAt(e.deltaY>0?1.25:0.8,p.x,p.y);},{passive:false});
let drag=null;
svg.addEventListener('pointerdown',e=>{drag={x:e.clientX,y:e.clientY,v:view.slice(),moved:false};});
svg.addEventListener('pointermove',e=>{if(!drag)return;const dx=e.clientX-drag.x,dy=e.clientY-drag.y;
  if(Math.abs(dx)+Math.abs(dy)>3)drag.moved=true;if(!drag.moved)return;const k=1/(svg.getScreenCTM().a||1);
  setView([drag.v[0]-dx*k,drag.v[1]-dy*k,drag.v[2],drag.v[3]]);});
window.addEventListener('pointerup',()=>{setTimeout(()=>{drag=null;},0);});
document.getElementById('tree-controls').addEventListener('click',e=>{const b=e.target.closest('button');if(!b)return;
  const cx=view[0]+view[2]/2,cy=view[1]+view[3]/2;
  if(b.dataset.act==='fit')fit();else if(b.dataset.act==='in')zoomAt(0.5,cx,cy);else if(b.dataset.act==='out')zoomAt(2,cx,cy);
  else if(b.dataset.act==='best'&&svg.dataset.best){select(svg.dataset.best);centre(svg.dataset.best);}});
function exchangesOf(id,p){const x=EXCHANGES[id];if(!x)return;
  p.append(el('h4',`model exchanges of the jobs run on this node (${x.exchanges.length} shown)`));
  if(!x.exchanges.length)p.append(el('p','none recorded'));
  for(const r of x.exchanges){const d=el('details',undefined,'exchange');
    d.append(el('summary',`job ${r.job} (${r.kind}) ${r.role}, ${r.tokens} tokens, ${r.file}`));
    d.append(el('div','asked (last message):','who'),el('pre',r.prompt),el('div','answered:','who'),el('pre',r.answer));p.append(d);}
  const jobs=Object.entries(x.logs);if(jobs.length){p.append(el('h4','log files (the run\'s logs/job-N/)'));
    const u=el('ul');for(const [job,files] of jobs)u.append(el('li',`job ${job}: ${files.join(', ')}`));p.append(u);}}
function select(id){
  const n=NODES[id]; if(!n) return;
  document.querySelectorAll('.node.selected').forEach(g=>g.classList.remove('selected'));
  const g=document.querySelector(`.node[data-id="${CSS.escape(id)}"]`); if(g) g.classList.add('selected');
  const p=document.getElementById('panel'); p.replaceChildren(); p.dataset.node=id;
  p.append(el('h3','node '+id));
  const t=el('table');t.className='kv';
  const rows=[['parent',n.parent??'- (root)'],['origin',n.origin],['edit kind',n.edit],['status',n.valid?'valid':'invalid: '+(n.reason||'no reason recorded')],
    ['own',rate(n.own)],['clade estimate',rate(n.clade)+'  S/(S+F) over its clade'],['best lineage',n.best_lineage?'yes':'no'],
    ['cost',`${n.tokens.toLocaleString()} tokens, $${n.cost.toFixed(4)}`]];
  if(n.forged) rows.push(['FLAGGED',n.forged+' forged verdict(s): the tested code wrote its own']);
  for(const [k,v] of rows){const r=el('tr');r.append(el('td',k),el('td',v));t.append(r);}
  p.append(t);
  if(!n.detailed){p.append(el('p','Instructions, diff, outcomes and exchanges of this node are not embedded in this page (a large run): evolve show RUN '+id+' prints them.'));return;}
  p.append(el('h4','instructions'),el('pre',n.instructions||'(none: the seed agent, or none recorded)'));
  if(n.candidates&&n.candidates.length){p.append(el('h4','candidates its expansion sampled (the first that passed every filter is the child)'));
    const c=el('ol');for(const line of n.candidates)c.append(el('li',line.replace(/^\d+\.\s*/,'')));p.append(c);}
  p.append(el('h4','diff against its parent'));
  const d=el('pre',undefined,'diff');d.id='diff';
  if(n.parent===null){d.textContent='(the root has no parent)';}
  else if(!n.diff){d.textContent='(no change)';}
  else for(const line of n.diff.split('\n')){
    const cls=line.startsWith('+')&&!line.startsWith('+++')?'add':line.startsWith('-')&&!line.startsWith('---')?'del':line.startsWith('@@')?'hunk':'';
    d.append(el('span',line+'\n',cls));}
  p.append(d,el('h4','outcomes per task'));
  const o=el('table');o.className='outcomes';
  for(const [task,outs] of Object.entries(n.outcomes)){const r=el('tr');r.append(el('td',task));
    const c=el('td');outs.forEach(x=>c.append(el('span',x+' ',x)));r.append(c);o.append(r);}
  p.append(Object.keys(n.outcomes).length?o:el('p','no evaluations yet'));
  exchangesOf(id,p);
}
svg.addEventListener('click',e=>{if(drag&&drag.moved)return;const g=e.target.closest('.node');if(!g)return;
  select(g.dataset.id);history.replaceState(null,'','#node='+encodeURIComponent(g.dataset.id));});
svg.addEventListener('keydown',e=>{const g=e.target.closest('.node');if(g&&e.key==='Enter')select(g.dataset.id);});
// The node table: sortable (click a header), filterable (text over id, parent, edit kind, status).
const ROWS=Object.entries(NODES).map(([id,n])=>({id,parent:n.parent??'',edit:n.edit,status:n.valid?'valid':'invalid',
  own:n.own[0]+n.own[1]?n.own[0]/(n.own[0]+n.own[1]):-1,ownText:rate(n.own),clade:n.clade[0]+n.clade[1]?n.clade[0]/(n.clade[0]+n.clade[1]):-1,
  cladeText:rate(n.clade),tokens:n.tokens,cost:n.cost,best:n.best_lineage}));
const SHOWN=200;let sortKey='id',sortDir=1;
function key(r,k){return k==='id'||k==='parent'?(isNaN(+r[k])||r[k]===''?r[k]:+r[k]):r[k];}
function drawTable(){const q=document.getElementById('node-filter').value.trim().toLowerCase();
  const rows=ROWS.filter(r=>!q||[r.id,r.parent,r.edit,r.status].some(v=>String(v).toLowerCase().includes(q)));
  rows.sort((a,b)=>{const x=key(a,sortKey),y=key(b,sortKey);return (x<y?-1:x>y?1:0)*sortDir;});
  const body=document.querySelector('#node-table tbody');body.replaceChildren();
  for(const r of rows.slice(0,SHOWN)){const tr=el('tr',undefined,r.best?'best':'');tr.dataset.id=r.id;
    for(const v of [r.id,r.parent||'-',r.edit,r.status,r.ownText,r.cladeText,r.tokens.toLocaleString(),'$'+r.cost.toFixed(4)])tr.append(el('td',String(v)));
    body.append(tr);}
  document.getElementById('node-count').textContent=`${Math.min(rows.length,SHOWN)} of ${rows.length} matching nodes shown (of ${ROWS.length})`;}
document.querySelector('#node-table thead').addEventListener('click',e=>{const th=e.target.closest('th');if(!th)return;
  sortDir=sortKey===th.dataset.key?-sortDir:1;sortKey=th.dataset.key;drawTable();});
document.querySelector('#node-table tbody').addEventListener('click',e=>{const tr=e.target.closest('tr');if(!tr)return;
  select(tr.dataset.id);centre(tr.dataset.id);document.getElementById('treebox').scrollIntoView();});
document.getElementById('node-filter').addEventListener('input',drawTable);
drawTable();fit();
function fromHash(){const m=location.hash.match(/^#node=(.+)$/);if(!m)return;const id=decodeURIComponent(m[1]);
  if(NODES[id]){select(id);centre(id);}}
fromHash();
document.body.dataset.ready=String(Math.round(performance.now()));
"""

// The stylesheet and the one script of `bb frames --html` (frames-html.ts
// writes them inline under the page's nonce).
//
// The script reads two JSON blocks: #bb-data (lanes, rows, bands) before
// it, and #bb-payloads (every row's whole payload), which comes after it
// in the page and is parsed on the first click only: a big capture draws
// its first rows before the browser has even read its payloads. Rows are virtualized:
// `ys` holds every row's y, and only rows inside the scrolled window (plus
// OVER rows either side) exist as elements. Captured strings are set with
// textContent or element properties only.

/** The page's stylesheet. */
export const FRAMES_CSS = `
html,body{height:100%;margin:0}
body{font:13px/1.35 system-ui,sans-serif;color:#222;display:flex;flex-direction:column}
#top{padding:6px 10px;border-bottom:1px solid #ddd;display:flex;gap:1.2em;align-items:baseline;flex-wrap:wrap}
#top h1{font-size:15px;margin:0}#summary,#status{color:#555}
.legend .lg{margin-right:.8em;font-size:12px;color:var(--c)}.legend i{display:inline-block;width:14px;height:0;border-top:2px solid var(--c);margin-right:3px;vertical-align:middle}
#main{flex:1;display:flex;min-height:0}
#scroll{flex:1;overflow:auto;position:relative;outline:none}
#canvas{position:relative}
#heads{position:sticky;top:0;height:66px;background:#fafafa;border-bottom:1px solid #ccc;z-index:3}
.h{position:absolute;top:4px;height:58px;cursor:pointer;overflow:hidden;border:1px solid #bbb;border-radius:4px;background:#fff;padding:2px 5px;box-sizing:border-box}
.h.srv{background:#f0f0f0}
.h b,.h small{display:block;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}.h small{color:#555}.h small.d{color:#0550ae}
#search{width:26em;font:inherit;padding:2px 6px}#search.none{background:#ffebe9}
#body{position:relative}
.ll{position:absolute;top:0;width:0;border-left:1px dashed #bbb}.ll.srv{border-left:2px solid #888}
.band{position:absolute;left:0;border-top:1px solid rgba(60,100,180,.45)}
.band.b0{background:rgba(60,100,180,.06)}.band.b1{background:rgba(60,160,100,.07)}
.bn{position:absolute;left:4px;top:1px;font-size:11px;font-weight:600;color:#345;white-space:nowrap}
.row{position:absolute;left:0;height:24px;cursor:pointer}
.row:hover{background:rgba(0,0,0,.04)}.row.sel{background:#fff3c4}.row.err{background:rgba(207,34,46,.09)}
.g,.t{position:absolute;top:5px;font:11px ui-monospace,monospace;color:#666;white-space:nowrap}.g{left:4px}.t{left:60px}
.a{position:absolute;top:17px;height:0;border-top:2px solid var(--c)}
.a::after{content:'';position:absolute;top:-6px;border-style:solid}
.a.to-r::after{right:-1px;border-width:5px 0 5px 8px;border-color:transparent transparent transparent var(--c)}
.a.to-l::after{left:-1px;border-width:5px 8px 5px 0;border-color:transparent var(--c) transparent transparent}
.l{position:absolute;top:2px;font:11px ui-monospace,monospace;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;color:var(--c)}
.x{position:absolute;top:3px;color:#cf222e;font-weight:700}
.c-text{--c:#1f6feb}.c-binary{--c:#8250df}.c-close{--c:#bc4c00}.c-ping,.c-pong{--c:#6e7781}.c-cont{--c:#0a7f86}
.c-error{--c:#cf222e}.c-other{--c:#57606a}.c-http{--c:#1a7f37}
#panel{width:40%;max-width:760px;border-left:1px solid #ccc;overflow:auto;padding:8px 12px;box-sizing:border-box;position:relative}
#panel[hidden]{display:none}#panel h2{font-size:14px;margin:.2em 1.5em .4em 0}
#panel-close{position:absolute;right:8px;top:6px;border:0;background:none;font-size:18px;cursor:pointer}
#panel dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 10px;margin:0 0 8px;font-size:12px}#panel dt{color:#666}#panel dd{margin:0;word-break:break-all}
#panel pre{white-space:pre-wrap;word-break:break-all;font:12px/1.4 ui-monospace,monospace;background:#f6f8fa;padding:8px;margin:0}
.empty{padding:2em;color:#555}
`;

/** The page's script (plain ES2017, no imports). Written with String.raw: backslashes stay as typed. */
export const FRAMES_SCRIPT = String.raw`(function(){
'use strict';
var D=JSON.parse(document.getElementById('bb-data').textContent);
var P=null;
var ROW=24,BAND=18,GUT=128,LANE=200,SRV=150,NOTES=360,HEAD=66,OVER=15,MAXGAP=15*ROW;
var lanes=D.lanes,rows=D.rows,n=rows.length,bands=D.bands;
// NOTES: room right of the server lane, so labels of the lanes nearest the server are not cut short.
var W=GUT+lanes.length*LANE+SRV+NOTES;
var $=function(id){return document.getElementById(id);};
var scroll=$('scroll'),canvas=$('canvas'),heads=$('heads'),body=$('body'),layer=$('rows'),bandLayer=$('bands'),lines=$('lines');
var panel=$('panel');
var ys=new Float64Array(n),total=0,selected=-1,first=-1,last=-1,pending=false;
// order: the rows shown, by position (null: all of them, a search narrows it); m: how many; vb: bands as [name, from, to] positions.
var order=null,m=n,vb=[];
function idx(k){return order?order[k]:k;}
function posOf(i){if(!order)return i;var lo=0,hi=m;while(lo<hi){var h=(lo+hi)>>1;if(order[h]<i)lo=h+1;else hi=h;}return lo<m&&order[lo]===i?lo:-1;}
var bandOf=new Int32Array(n).fill(-1);
bands.forEach(function(b,k){for(var i=b[1];i<=b[2];i++)bandOf[i]=k;});
var closes={};D.closes.forEach(function(c){closes[c[0]]={code:c[1],reason:c[2]};});
function laneX(l){return GUT+l*LANE+LANE/2;}
var srvX=GUT+lanes.length*LANE+SRV/2;
function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;if(text!=null)e.textContent=text;return e;}
function offset(t){return t==null?'?':'+'+t.toFixed(3)+'s';}
function layout(byTime){
  var scale=0;
  if(byTime){
    var gaps=[];
    for(var i=1;i<m;i++){var a=rows[idx(i-1)][4],b=rows[idx(i)][4];if(a!=null&&b!=null&&b>a)gaps.push(b-a);}
    if(gaps.length){gaps.sort(function(x,y){return x-y;});scale=1.5*ROW/gaps[gaps.length>>1];}
  }
  var y=0,prev=-1;vb=[];
  for(var k=0;k<m;k++){
    var j=idx(k);
    if(k>0){
      var gap=ROW;
      if(scale){var p=rows[prev][4],q=rows[j][4];if(p!=null&&q!=null&&q>p)gap=Math.min(Math.max(ROW,(q-p)*scale),MAXGAP);}
      y+=gap;
    }
    if(bandOf[j]>=0){
      if(k===0||bandOf[prev]!==bandOf[j]){y+=BAND;vb.push([bands[bandOf[j]][0],k,k,bandOf[j]]);}
      else vb[vb.length-1][2]=k;
    }
    ys[k]=y;prev=j;
  }
  total=m?y+ROW+8:0;
  body.style.height=total+'px';
  canvas.style.width=W+'px';
  for(var k=0;k<lines.children.length;k++)lines.children[k].style.height=total+'px';
  first=last=bandFirst=bandLast=-1;
}
function drawHeads(){
  lanes.forEach(function(l,i){
    var h=el('div','h');h.style.left=(GUT+i*LANE+4)+'px';h.style.width=(LANE-8)+'px';
    h.appendChild(el('b',null,l.name));
    h.appendChild(el('small',null,l.kind==='ws'?l.where:l.rows+' rows'));
    if(l.differs)h.appendChild(el('small','d',l.differs));
    h.title=(l.kind==='ws'?l.name+'\n'+l.url:'plain HTTP entries')+'\n(click: only this lane)';
    h.dataset.lane=i;heads.appendChild(h);
    var line=el('div','ll');line.style.left=laneX(i)+'px';lines.appendChild(line);
  });
  var s=el('div','h srv');s.style.left=(GUT+lanes.length*LANE+4)+'px';s.style.width=(SRV-8)+'px';
  s.appendChild(el('b',null,'server'));s.appendChild(el('small',null,D.server));s.title=D.server;heads.appendChild(s);
  var sl=el('div','ll srv');sl.style.left=srvX+'px';lines.appendChild(sl);
  var g=el('div','h');g.style.left='4px';g.style.width=(GUT-12)+'px';g.appendChild(el('b',null,'seq'));g.appendChild(el('small',null,'time'));heads.appendChild(g);
}
// First position whose row's bottom is below y (binary search over ys).
function rowAt(y){var lo=0,hi=m;while(lo<hi){var h=(lo+hi)>>1;if(ys[h]+ROW<y)lo=h+1;else hi=h;}return lo;}
function drawRow(i,k){
  var r=rows[i],x1=laneX(r[0]),left=Math.min(x1,srvX),width=Math.abs(srvX-x1);
  var e=el('div','row c-'+r[2]+(r[7]!=null?' err':'')+(i===selected?' sel':''));
  e.style.top=ys[k]+'px';e.style.width=W+'px';
  e.dataset.i=i;e.dataset.lane=r[0];if(r[3]!=null)e.dataset.seq=r[3];
  e.appendChild(el('span','g',r[3]!=null?'#'+r[3]:String(i+1)));
  e.appendChild(el('span','t',offset(r[4])));
  var a=el('div','a '+(r[1]===0?'to-r':'to-l'));a.style.left=left+'px';a.style.width=width+'px';e.appendChild(a);
  var l=el('div','l',r[6]);l.style.left=(left+6)+'px';l.style.width=Math.max(0,W-left-12)+'px';e.appendChild(l);
  if(r[7]!=null){var x=el('span','x','!');x.style.left=(x1-14)+'px';x.title=r[7];e.appendChild(x);}
  return e;
}
var bandFirst=-1,bandLast=-1;
function drawBands(top,bottom){
  var lo=0,hi=vb.length;
  while(lo<hi){var h=(lo+hi)>>1;if(ys[vb[h][2]]+ROW<top)lo=h+1;else hi=h;}
  var end=lo;while(end<vb.length&&ys[vb[end][1]]-BAND<=bottom)end++;
  if(lo===bandFirst&&end===bandLast)return;
  bandFirst=lo;bandLast=end;
  var f=document.createDocumentFragment();
  for(var k=lo;k<end;k++){
    var b=vb[k],y0=ys[b[1]]-BAND;
    var e=el('div','band b'+(b[3]%2));e.style.top=y0+'px';e.style.height=(ys[b[2]]+ROW-y0)+'px';e.style.width=W+'px';
    e.dataset.band=b[3];e.appendChild(el('span','bn','step: '+b[0]));f.appendChild(e);
  }
  bandLayer.replaceChildren(f);
}
function render(){
  pending=false;
  if(!m){layer.replaceChildren();bandLayer.replaceChildren();return;}
  var top=scroll.scrollTop-HEAD,bottom=top+scroll.clientHeight;
  var a=Math.max(0,rowAt(top)-OVER),b=Math.min(m-1,rowAt(bottom)+OVER);
  drawBands(top,bottom);
  if(a===first&&b===last)return;
  first=a;last=b;
  var f=document.createDocumentFragment();
  for(var k=a;k<=b;k++)f.appendChild(drawRow(idx(k),k));
  layer.replaceChildren(f);
}
function later(){if(!pending){pending=true;requestAnimationFrame(render);}}
function hexDump(b64){
  var s;try{s=atob(b64);}catch(e){return '(not valid base64) '+b64;}
  if(!s.length)return '(empty)';
  var out=[];
  for(var i=0;i<s.length;i+=16){
    var line=('0000000'+i.toString(16)).slice(-8)+'  ',asc='';
    for(var j=0;j<16;j++){
      if(i+j<s.length){var c=s.charCodeAt(i+j);line+=('0'+c.toString(16)).slice(-2)+' ';asc+=c>=32&&c<127?s.charAt(i+j):'.';}
      else line+='   ';
      if(j===7)line+=' ';
    }
    out.push(line+' |'+asc+'|');
  }
  return out.join('\n');
}
function pretty(text){
  var t=text.trim();
  if(t.charAt(0)==='{'||t.charAt(0)==='['){try{return JSON.stringify(JSON.parse(t),null,2);}catch(e){}}
  return text;
}
// Payloads (frames-html.ts payloadData): [opcode, data, base64?, truncated, size, decoded protobuf] or [head, base64?, body, cut].
function payloadText(p){
  if(typeof p[0]==='string'){
    if(p[2]==null)return p[0]+'\n\n(no body)';
    var b=p[1]?hexDump(p[2]):pretty(p[2]);
    return p[0]+'\n\n'+(p[3]!=null?b+'\n… cut: '+p[3]+' characters in the capture (bb show --body prints it whole)':b);
  }
  var s=p[2]?hexDump(p[1]):pretty(p[1]);
  if(p[5]!=null)s=p[5]+'\n\nhex:\n'+s;
  return p[3]!=null?s+'\n… recorded '+p[3]+' bytes (past the body cap'+(p[4]!=null?', of '+p[4]:'')+')':s;
}
var OPS={'-1':'error',0:'continuation',1:'text',2:'binary',8:'close',9:'ping',10:'pong'};
function show(i){
  if(i<0||i>=n)return;
  // The payload block comes after this script: while the parser is still in it, wait for it.
  if(document.readyState==='loading'){document.addEventListener('DOMContentLoaded',function(){show(i);},{once:true});return;}
  if(!P)P=JSON.parse($('bb-payloads').textContent);
  selected=i;first=-1;render();
  var r=rows[i],p=P[i],lane=lanes[r[0]];
  var what=r[8]==='ws'?(OPS[p[0]]||'opcode '+p[0]):r[8];
  $('panel-title').textContent=(r[3]!=null?'#'+r[3]+' ':'')+(r[1]===0?'→ ':'← ')+what+' · '+lane.name;
  var meta=$('panel-meta');meta.replaceChildren();
  function add(k,v){if(v==null||v==='')return;meta.appendChild(el('dt',null,k));meta.appendChild(el('dd',null,String(v)));}
  add('direction',r[1]===0?'client → server (send)':'server → client (receive)');
  add('time',r[4]==null?'unknown':new Date((D.t0+r[4])*1000).toISOString()+' ('+offset(r[4])+')');
  add('size',r[5]);
  if(lane.kind==='ws')add('url',lane.url);
  add('step',bandOf[i]>=0?bands[bandOf[i]][0]:null);
  var c=closes[i];if(c){add('close code',c.code==null?'none':c.code);add('close reason',c.reason===''?'(empty)':c.reason);}
  add('error',r[7]);
  add('ended',r[9]);
  $('panel-payload').textContent=payloadText(p);
  panel.hidden=false;
}
function reveal(i){
  var k=posOf(i);if(k<0)return;
  var top=ys[k]+HEAD,view=scroll.clientHeight;
  if(top-HEAD<scroll.scrollTop)scroll.scrollTop=top-HEAD-ROW;
  else if(top+ROW>scroll.scrollTop+view)scroll.scrollTop=top+2*ROW-view;
}
layer.addEventListener('click',function(ev){
  var row=ev.target.closest?ev.target.closest('.row'):null;
  if(row)show(Number(row.dataset.i));
});
document.addEventListener('keydown',function(ev){
  if(ev.key==='Escape'){panel.hidden=true;return;}
  if(selected<0||ev.target===search)return;
  var d=ev.key==='ArrowDown'||ev.key==='j'?1:ev.key==='ArrowUp'||ev.key==='k'?-1:0;
  var k=posOf(selected);
  if(d&&k>=0&&k+d>=0&&k+d<m){ev.preventDefault();show(idx(k+d));reveal(selected);}
});
$('panel-close').addEventListener('click',function(){panel.hidden=true;});
$('by-time').addEventListener('change',function(ev){var at=rowAt(scroll.scrollTop-HEAD);layout(ev.target.checked);scroll.scrollTop=m?ys[Math.min(at,m-1)]:0;render();});
// The search (frames-search.ts): the index is built once, on first use, from each row's label and whole payload.
var search=$('search'),found=$('found'),index=null;
function b64text(s){try{return atob(s);}catch(e){return s;}}
function rowText(i){
  var r=rows[i],p=P[i];
  if(typeof p[0]==='string')return r[6]+'\n'+p[0]+(p[2]!=null&&!p[1]?'\n'+p[2]:'');
  return r[6]+'\n'+(p[2]?b64text(p[1]):p[1]);
}
function searchIndex(){
  if(index)return index;
  if(!P)P=JSON.parse($('bb-payloads').textContent);
  var items=new Array(n);
  for(var i=0;i<n;i++)items[i]={text:rowText(i),dir:rows[i][1],lane:rows[i][0]};
  index=bbFrameSearch.build(items,lanes.map(function(l){return {id:l.id,text:l.name+' '+l.url+' '+l.differs};}));
  return index;
}
function applySearch(){
  var t0=performance.now();
  order=bbFrameSearch.run(searchIndex(),search.value);
  m=order?order.length:n;
  layout($('by-time').checked);
  var k=selected>=0?posOf(selected):-1;
  scroll.scrollTop=k>=0?Math.max(0,ys[k]-3*ROW):0;
  render();
  found.textContent=order?m+' of '+n+' rows match':'';
  search.classList.toggle('none',order!==null&&m===0);
  document.body.dataset.searchMs=String(Math.round((performance.now()-t0)*10)/10);
}
// Enter jumps to the next match (Shift+Enter the one before) and opens it.
function jump(d){
  if(!m)return;
  var k=selected>=0?posOf(selected):-1;
  k=k<0?(d>0?0:m-1):(k+d+m)%m;
  show(idx(k));reveal(selected);
}
search.addEventListener('input',applySearch);
search.addEventListener('keydown',function(ev){
  if(ev.key==='Enter'){ev.preventDefault();jump(ev.shiftKey?-1:1);}
  else if(ev.key==='Escape'){search.value='';applySearch();}
});
heads.addEventListener('click',function(ev){
  var h=ev.target.closest?ev.target.closest('.h[data-lane]'):null;
  if(!h)return;
  var l=lanes[Number(h.dataset.lane)];
  search.value=l.kind==='ws'?'conn:'+l.id:'';applySearch();
});
scroll.addEventListener('scroll',later);
window.addEventListener('resize',later);
drawHeads();
layout(D.byTime);
if(!n)body.appendChild(el('p','empty','No messages match.'));
render();
$('status').textContent=n?'click an arrow for its payload; ↑/↓ step through; Enter jumps to the next match':'';
document.body.setAttribute('data-ready','1');
performance.mark('bb-ready');
})();`;

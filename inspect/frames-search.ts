// The search of the frames page, as one self-contained script (plain ES2017,
// no DOM, no imports) that defines the global `bbFrameSearch`, so that
// `bb frames --html` and the live UI include the same text under their own
// nonce. A page builds an index once from its rows, then runs queries on it:
//
//   var index = bbFrameSearch.build(items, lanes);
//     items: [{ text, dir: 0 send | 1 receive, lane }], lanes: [{ id, text }]
//   var shown = bbFrameSearch.run(index, 'hello dir:send conn:c3');
//     an Int32Array of the matching items' positions, in order (null: the query is empty)
//
// Query words all have to match (case-insensitive substrings of a row's
// label and payload text); "quoted phrases" keep their spaces; `dir:send`,
// `dir:receive` (or `→`, `←`) keep one direction; `conn:X` keeps lanes whose
// id is X, else whose name or label contains X. Payload text is never run or
// parsed as markup: the script only compares strings.

/** The script text, to be written inside a `<script nonce>` element before the page's own script. */
export const FRAMES_SEARCH_SCRIPT = String.raw`var bbFrameSearch=(function(){
'use strict';
// Characters of a row's text searched: a megabyte payload costs no more than this.
var MAX_TEXT=262144;
function parse(q){
  var out={words:[],dir:-1,conns:[]},re=/"([^"]*)"?|(\S+)/g,m;
  while((m=re.exec(q))!==null){
    if(m[1]!=null){if(m[1]!=='')out.words.push(m[1].toLowerCase());continue;}
    var w=m[2],l=w.toLowerCase();
    if(l==='dir:send'||l==='→'||l==='->')out.dir=0;
    else if(l==='dir:receive'||l==='dir:recv'||l==='←'||l==='<-')out.dir=1;
    else if(l.indexOf('conn:')===0&&l.length>5)out.conns.push(w.slice(5));
    else out.words.push(l);
  }
  return out;
}
function build(items,lanes){
  var n=items.length,text=new Array(n),dir=new Uint8Array(n),lane=new Int32Array(n);
  for(var i=0;i<n;i++){
    var t=items[i].text||'';
    text[i]=(t.length>MAX_TEXT?t.slice(0,MAX_TEXT):t).toLowerCase();
    dir[i]=items[i].dir;lane[i]=items[i].lane;
  }
  return {text:text,dir:dir,lane:lane,lanes:lanes.map(function(l){return {id:String(l.id),text:String(l.text).toLowerCase()};})};
}
function laneMask(index,conns){
  var mask=new Uint8Array(index.lanes.length);
  conns.forEach(function(c){
    var exact=false,lc=c.toLowerCase();
    index.lanes.forEach(function(l,k){if(l.id===c){mask[k]=1;exact=true;}});
    if(!exact)index.lanes.forEach(function(l,k){if(l.text.indexOf(lc)>=0)mask[k]=1;});
  });
  return mask;
}
function run(index,query){
  var q=parse(query||'');
  if(!q.words.length&&q.dir<0&&!q.conns.length)return null;
  var mask=q.conns.length?laneMask(index,q.conns):null;
  var n=index.text.length,out=new Int32Array(n),k=0,words=q.words,nw=words.length;
  outer:for(var i=0;i<n;i++){
    if(q.dir>=0&&index.dir[i]!==q.dir)continue;
    if(mask&&!mask[index.lane[i]])continue;
    var t=index.text[i];
    for(var w=0;w<nw;w++)if(t.indexOf(words[w])<0)continue outer;
    out[k++]=i;
  }
  return out.subarray(0,k);
}
return {parse:parse,build:build,run:run};
})();`;

import struct
Q='"'
def dims(shape):
    out=""
    for d in shape:
        out+= f'dim {{ dim_param: "{d}" }} ' if isinstance(d,str) else f'dim {{ dim_value: {d} }} '
    return out
def vi(name,shape,et=1):
    return f'{{ name: "{name}" type {{ tensor_type {{ elem_type: {et} shape {{ {dims(shape)}}} }} }} }}'
def init(name,shape,et=1,raw=None):
    s=f'initializer {{ {" ".join(f"dims: {d}" for d in shape)} data_type: {et} name: "{name}"'
    if raw is not None:
        s+=' raw_data: "'+"".join("\\%03o" % b for b in raw)+'"'
    return s+' }'
def node(op,ins,outs,name,attrs=()):
    s='node { '+" ".join('input: "%s"' % i for i in ins)+" "+" ".join('output: "%s"' % o for o in outs)+f' name: "{name}" op_type: "{op}"'
    for n,v in attrs:
        if isinstance(v,list): s+=f' attribute {{ name: "{n}" {" ".join(f"ints: {x}" for x in v)} type: INTS }}'
        elif isinstance(v,float): s+=f' attribute {{ name: "{n}" f: {v} type: FLOAT }}'
        else: s+=f' attribute {{ name: "{n}" i: {v} type: INT }}'
    return s+' }'
def model(name,nodes,inits,inputs,outputs,opset=13):
    g=f'graph {{ name: "{name}"\n'+"\n".join(nodes)+"\n"+"\n".join(inits)+"\n"
    g+="\n".join(f"input {x}" for x in inputs)+"\n"+"\n".join(f"output {x}" for x in outputs)+"\n}\n"
    return f'ir_version: 7\nproducer_name: "sramplan fuzz seed"\nopset_import {{ domain: "" version: {opset} }}\n'+g
m1=model("conv_pool_gemm",[
 node("Conv",["x","w","b"],["c"],"conv",[("kernel_shape",[3,3]),("pads",[1,1,1,1]),("strides",[1,1]),("group",1)]),
 node("Relu",["c"],["r"],"relu"),
 node("MaxPool",["r"],["m"],"pool",[("kernel_shape",[2,2]),("strides",[2,2])]),
 node("Flatten",["m"],["f"],"flatten",[("axis",1)]),
 node("Gemm",["f","wf","bf"],["g"],"fc",[("transB",1)]),
 node("Softmax",["g"],["y"],"softmax",[("axis",1)])],
 [init("w",[4,3,3,3]),init("b",[4]),init("wf",[10,64]),init("bf",[10])],
 [vi("x",["N",3,8,8])],[vi("y",["N",10])])
open("conv_pool_gemm.txtpb","w").write(m1)
shape=struct.pack("<2q",1,-1)
w=struct.pack("<16f",*[0.1*(i-8) for i in range(16)])
m2=model("residual_se",[
 node("Conv",["x","w1"],["a"],"pw",[("kernel_shape",[1,1])]),
 node("Clip",["a","lo","hi"],["a6"],"relu6"),
 node("Conv",["a6","wd"],["d"],"dw",[("kernel_shape",[3,3]),("pads",[1,1,1,1]),("group",4)]),
 node("GlobalAveragePool",["d"],["gp"],"gap"),
 node("Sigmoid",["gp"],["s"],"sig"),
 node("Mul",["d","s"],["ds"],"scale"),
 node("Add",["ds","x"],["sum"],"add"),
 node("Concat",["sum","x"],["cat"],"concat",[("axis",1)]),
 node("AveragePool",["cat"],["ap"],"avg",[("kernel_shape",[2,2]),("strides",[2,2])]),
 node("Transpose",["ap"],["t"],"tr",[("perm",[0,2,3,1])]),
 node("Reshape",["t","shape"],["y"],"reshape")],
 [init("w1",[4,4,1,1],raw=w),init("wd",[4,1,3,3]),init("shape",[2],7,shape),
  init("lo",[],1,struct.pack("<f",0.0)),init("hi",[],1,struct.pack("<f",6.0))],
 [vi("x",[1,4,6,6])],[vi("y",[1,"M"])])
open("residual_se.txtpb","w").write(m2)
m3=model("matmul",[
 node("MatMul",["x","w"],["m"],"mm"),
 node("Add",["m","b"],["a"],"bias"),
 node("Relu",["a"],["r"],"relu"),
 node("Reshape",["r","s"],["y"],"view")],
 [init("w",[8,4],raw=struct.pack("<32f",*[0.01*i for i in range(32)])),init("b",[4]),init("s",[3],7,struct.pack("<3q",1,2,2))],
 [vi("x",[1,8])],[vi("y",[1,2,2])])
open("matmul.txtpb","w").write(m3)

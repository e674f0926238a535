def greet(name):   
    message = "hello " + name  
    return message	

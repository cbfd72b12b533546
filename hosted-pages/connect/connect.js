// the connect page's script

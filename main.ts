// placeholder main
trace("xsclaw\n");

// placeholder: being written (issue 4/5)
